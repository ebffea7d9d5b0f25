package remote

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Serve starts an embedded NATS server with JetStream listening on addr
// (host:port; port 0 picks a free one) and keeping its streams under dir, for
// users without a NATS cluster. Shut it down with Shutdown; ClientURL says
// where it listens.
func Serve(addr, dir string) (*server.Server, error) {
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
	s, err := server.NewServer(&server.Options{
		Host: host, Port: p,
		JetStream: true, StoreDir: dir,
		NoSigs: true,
		// Jobs are a few hundred bytes; results carry every timed sample.
		MaxPayload: 8 << 20,
	})
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
