package objstoretest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NginxInstall is how to install the nginx the tests run.
const NginxInstall = "apt-get install -y nginx (Debian/Ubuntu; /usr/sbin/nginx)"

// nginxBin finds Debian's nginx, then any nginx on PATH.
func nginxBin() string {
	if fi, err := os.Stat("/usr/sbin/nginx"); err == nil && fi.Mode()&0o111 != 0 {
		return "/usr/sbin/nginx"
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	return ""
}

// NginxConf is a complete nginx.conf for one foreground nginx process, as
// the current user, that serves the directory root at listen
// ("127.0.0.1:PORT"). Its pid file, logs and temp paths are in runDir.
// Types are its own, not /etc/nginx/mime.types (which says text/xml): .xml
// and extensionless files (resources) are application/xml, .html text/html,
// .zip application/zip. extra goes into the server block, e.g. the snippet
// the exporter recommends for Content-Type and Cache-Control.
//
// master_process is off, so there are no workers to switch user: as root it
// needs no "user" directive and reads root as root.
func NginxConf(root, listen, runDir, extra string) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
    types {
        application/xml xml;
        text/html html htm;
        application/zip zip;
        text/plain txt;
        application/json json;
    }
    default_type application/xml;
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen %[2]s;
        root %[3]q;
%[4]s
    }
}
`, runDir, listen, root, extra)
}

// Nginx starts nginx serving the directory root (see NginxConf for extra)
// and stops it when the test ends. It returns the base URL,
// "http://127.0.0.1:PORT", without a trailing slash.
func Nginx(t testing.TB, root, extraConf string) string {
	t.Helper()
	bin := nginxBin()
	if bin == "" {
		missing(t, "nginx", NginxInstall)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for range 3 {
		runDir := t.TempDir()
		addr := freeAddr(t)
		conf := filepath.Join(runDir, "nginx.conf")
		if err := os.WriteFile(conf, []byte(NginxConf(abs, addr, runDir, extraConf)), 0o644); err != nil {
			t.Fatal(err)
		}
		// -e: the error log before the configuration is read; -p: the
		// prefix for relative paths. Neither may point at /var/log/nginx.
		p, err := startProc(exec.Command(bin, "-p", runDir, "-e", filepath.Join(runDir, "error.log"), "-c", conf))
		if err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		base := "http://" + addr
		if last = p.waitHTTP(base+"/", 10*time.Second); last == nil {
			t.Cleanup(p.stop)
			return base
		}
		p.stop()
		log, _ := os.ReadFile(filepath.Join(runDir, "error.log"))
		last = fmt.Errorf("%w\nerror.log:\n%s", last, log)
		p.out.Write(log)
		if !p.addrInUse() {
			break
		}
	}
	t.Fatalf("nginx: %v", last)
	return ""
}
