package remote

import (
	"context"
	"time"
)

// attemptTimeout bounds one request to the server. A request sent just as
// the connection dropped is lost with it, and without a bound of its own it
// would wait as long as the whole batch may. Tests shorten it.
var attemptTimeout = 5 * time.Second

// retry calls f, each call with a context of its own that ends after
// attemptTimeout, until f succeeds, ctx ends, or f has failed for longer than
// limit; it returns f's last error. It is what carries the tuner and the
// workers across a restart of the NATS server (the connection itself
// reconnects for ever, and buffers what is published meanwhile). Every
// request retried this way is safe to repeat: publishes carry a message ID
// that their stream de-duplicates, and the rest only read or create what is
// missing.
func retry(ctx context.Context, limit time.Duration, f func(ctx context.Context) error) error {
	start := time.Now()
	wait := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || time.Since(start) >= limit {
			return err
		}
		sleep(ctx, wait)
		wait = min(2*wait, time.Second)
	}
}
