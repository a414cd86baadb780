"""The Microsoft Teams adapter: the Agents SDK route into the inbox, replies through the Bot
Connector, Adaptive Cards, streaming, and the sideloaded app package."""
