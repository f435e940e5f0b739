"""``lexprobe serve``: a local web page and a JSON API over the library, another skin beside the CLI.

:mod:`.opened` keeps what one server process holds open (indexes, reopened when a writer commits a new version;
models, loaded once); :mod:`.api` answers each endpoint from query parameters with plain dicts (its table of
endpoints is also the served OpenAPI document); :mod:`.projection` lays vectors out in 2-D (PCA, t-SNE, UMAP) for
the page's projection view; :mod:`.app` is the Flask application and the waitress server around them;
:mod:`.load` is a bounded load test over HTTP.
The page itself is ``static/`` (plain HTML, CSS and JavaScript: no build step, nothing fetched from outside).
"""

IDLE_TIMEOUT = 10  # seconds a connection may stay idle before the server closes it
