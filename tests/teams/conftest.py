from tests.teams.test_teams_http import teams, teams_factory

__all__ = ["teams", "teams_factory"]
