"""Fakes of external systems only (Slack's Web API, Teams' Bot Connector, model servers, web
sites) on loopback, all on the one base in loopback.py; and a real small model server."""
