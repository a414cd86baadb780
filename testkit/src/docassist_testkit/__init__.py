"""DocAssist's test kit, shared by tests/ and bench/ (never part of the product wheel).

    fakes           the fakes of external systems, all on one loopback base (fakes/loopback.py)
    pg              a throwaway PostgreSQL cluster (initdb, one server on a free port)
    any_db          a test's database read directly, SQLite file or PostgreSQL URL
    slack_load      a Slack load on loopback and the checks of its outcome
    model_capacity  a stand-in model of limited capacity (a semaphore around each request)
"""
