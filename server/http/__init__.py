"""HTTP routes of the service beside the WebSocket."""
