"""Our artifact downloader: the program inside the download and check-size Jobs.

It is a separate process, not operator code: ``aim-engine artifact download <uri>``
fills ``TARGET_DIR`` from an ``hf://`` or ``s3://`` source and reports each attempt
and its progress on the AIMArtifact's ``status`` subresource;
``aim-engine artifact check-size <uri>`` prints ``{"url": ..., "sizeBytes": N}``.
The contract (environment, protocols, exit codes, TLS, resumption) is in
``docs/downloader.md``.

* :mod:`~aim_core.downloader.config` -- settings read from the environment;
* :mod:`~aim_core.downloader.sources` -- source URIs, remote files, failure kinds;
* :mod:`~aim_core.downloader.filters` -- the ``downloadFilter`` globs;
* :mod:`~aim_core.downloader.hub` and :mod:`~aim_core.downloader.s3` -- listing and fetching;
* :mod:`~aim_core.downloader.attempt` -- one transfer attempt, run as a child process;
* :mod:`~aim_core.downloader.monitor` -- progress patches and stall detection;
* :mod:`~aim_core.downloader.status` -- merge patches on ``aimartifacts/status``;
* :mod:`~aim_core.downloader.verify` -- size and checksum verification;
* :mod:`~aim_core.downloader.tls` -- the trust store handed to every client;
* :mod:`~aim_core.downloader.run` -- the two commands.
"""
