from tests.slack.test_slack_http import rig, rig_factory

__all__ = ["rig", "rig_factory"]
