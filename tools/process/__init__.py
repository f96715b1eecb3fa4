"""The kli process tools: bash and eval in the live image."""
