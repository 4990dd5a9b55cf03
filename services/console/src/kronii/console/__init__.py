"""The person's console: a local web page showing what kronii knows, decided and did, and steering it."""
