"""Fan-out: committed events encoded once per audience and sent to the sockets that
watch a room, on this node and through the store's pub/sub to the others."""
