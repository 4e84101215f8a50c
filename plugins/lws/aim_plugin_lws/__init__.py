"""Runtime builder: LeaderWorkerSet for AIMServices whose replica spans several nodes."""
