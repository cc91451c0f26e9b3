"""`regbot serve`: the aiohttp server (routes, adapters, health and readiness), its start-up summary, request guard,
logs and graceful shutdown."""
