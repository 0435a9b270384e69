"""`python -m server`: until the WebSocket server lands, a demo game of four bots."""

from server.demo import main

if __name__ == "__main__":
    main()
