"""Development tooling outside the runtime package: the private Redis and PostgreSQL
(``python -m felt_dev.devserver``) and the AI ladder (``felt ladder``).
"""
