"""`agentctl probe`: a small scripted conversation whose responses tell the server rules apart."""
