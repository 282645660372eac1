"""The sample server.properties that pk-server-start ships (see server.properties)."""
