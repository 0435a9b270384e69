"""Operating the service: metrics, structured logs, event-loop lag, GC pacing, outage logs."""
