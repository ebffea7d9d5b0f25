package remote

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Security is what a broker demands of its clients. The zero value
// admits anyone, in plain text: for loopback only.
type Security struct {
	// Credentials are the members admitted, each with the permissions of
	// its role (Credential.Permissions); none means no authentication.
	Credentials []Credential
	// TLS, when not nil, is the server's TLS configuration (ServerTLS);
	// clients must then connect with TLS.
	TLS *tls.Config
}

// Serve starts an embedded NATS server with JetStream listening on addr
// (host:port; port 0 picks a free one) and keeping its streams under dir, for
// users without a NATS cluster, admitting the clients that sec admits (nil:
// anyone). Shut it down with Shutdown; ClientURL says where it listens.
func Serve(addr, dir string, sec *Security) (*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("remote: listen address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("remote: listen address %q: bad port", addr)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	} else {
		// The embedded server only logs, to no one, that it cannot listen,
		// and then never becomes ready: find out first, and say why.
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("remote: %w", err)
		}
		ln.Close()
	}
	opts := &server.Options{
		Host: host, Port: p,
		JetStream: true, StoreDir: dir,
		NoSigs: true,
		// Jobs are a few hundred bytes; results carry every timed sample.
		MaxPayload: 8 << 20,
	}
	if sec != nil && len(sec.Credentials) > 0 {
		if opts.Nkeys, err = nkeyUsers(sec.Credentials); err != nil {
			return nil, err
		}
	}
	if sec != nil && sec.TLS != nil {
		opts.TLS, opts.TLSConfig, opts.TLSTimeout = true, sec.TLS, 5
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("remote: the NATS server on %s did not start within 10s", addr)
	}
	return s, nil
}
