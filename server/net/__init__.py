"""The network edge: the uvicorn protocols (the WebSocket fast path and plain HTTP), one
connection per socket, its reader and writer, and the browser-facing security headers."""
