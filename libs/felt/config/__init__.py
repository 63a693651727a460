"""The process's settings: every environment variable Felt reads, declared once (`settings`)."""
