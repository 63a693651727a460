"""``python -m services.ai_worker``: run one AI worker (configured from the environment)."""

from services.ai_worker.worker import main

raise SystemExit(main())
