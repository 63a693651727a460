"""AI workers: stateless consumers of the table service's decision requests (see ``worker``)."""
