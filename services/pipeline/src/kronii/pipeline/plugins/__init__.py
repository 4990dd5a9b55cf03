"""The runner's ports as the service fills them: the ScreenCapture client over the capture
service's Unix socket, and the sensor snapshot, plugin registry, notifier and scheduler over the mesh."""
