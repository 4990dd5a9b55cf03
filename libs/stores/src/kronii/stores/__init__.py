"""kronii.stores: the mesh's shared stores: the NATS bus and its subjects, PostgreSQL (engine, migrations, the audit log), what is durable before it is acknowledged."""
