package export

// NginxServer is what nginx needs in its server block to serve an exported
// directory at the root of base_url (rsbridge export -nginx prints it):
// Content-Type for objects without a file extension (resources are XML,
// resource maps Atom) and Cache-Control by kind. A directory holds no
// per-object metadata, so closed Change Lists, which keep the URL they had
// open, get the short max-age; dump packages and manifests are immutable.
// Resources and maps get their type whatever their name ends with (an
// identifier ending in ".html" must not be served as HTML). Deleted
// resources answer 404 (rsbridge serve: 410). max-age=60 is export.max_age's
// default: change both together. The locations assume the export at the
// server's root.
const NginxServer = `    # rsbridge export: Content-Type and Cache-Control of the exported tree.
    types {
        application/xml xml;
        text/html html;
        application/zip zip;
    }
    default_type application/xml;
    location / {
        add_header Cache-Control "public, max-age=60" always;
    }
    location ~ ^/[a-z0-9-]+/[^/]+/resource/ {
        types { }
        default_type application/xml;
        add_header Cache-Control "public, max-age=60" always;
    }
    location ^~ /.rsbridge-tmp/ {
        return 404;   # the export's staging files
    }
    location ~ ^/[a-z0-9-]+/map(-0\.2)?/ {
        types { }
        default_type application/atom+xml;
        add_header Cache-Control "public, max-age=60" always;
    }
    location ~ ^/[a-z0-9-]+/[^/]+/(all|set/[^/]+)/dump/ {
        add_header Cache-Control "public, max-age=31536000, immutable" always;
    }
`
