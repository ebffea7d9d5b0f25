package tunedb

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.etcd.io/bbolt"

	"github.com/autotune-dev/autotune/schedule"
)

var bucketClaims = []byte("claims")

// An Owner is a tuning run that claims configs: the host and process it
// runs in, and a token of its own, since one process may run several.
type Owner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	Run  string `json:"run"`
}

// NewOwner returns a new run's identity in this process.
func NewOwner() Owner {
	host, _ := os.Hostname()
	var token [8]byte
	rand.Read(token[:])
	return Owner{Host: host, PID: os.Getpid(), Run: hex.EncodeToString(token[:])}
}

// claim is the value stored under a claimed config: who claimed it, when,
// until when, and when it released it, its records committed (zero while
// it measures).
type claim struct {
	Owner Owner     `json:"owner"`
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	Done  time.Time `json:"done,omitzero"`
}

// holds reports whether c keeps its config from a run that started at
// since, at now: c's owner released it after since (it measured the config
// after that run read what was measured), or it is measuring it still (its
// lease runs, and on this host its process is alive, so that a tuner
// killed with SIGKILL frees its configs at once rather than at the end of
// its lease), or it died after committing records of the config but
// before it could release it.
func (c claim) holds(rb *bbolt.Bucket, cfg schedule.Config, since, now time.Time, host string) bool {
	switch {
	case !c.Done.IsZero():
		return !c.Done.Before(since)
	case now.Before(c.Until) && (c.Owner.Host != host || alive(c.Owner.PID)):
		return true
	}
	return measuredSince(rb, cfg, c.From)
}

// Claim lets tuners that share a database divide a workload's configs
// between them, so that none is measured twice. A run claims each config
// before it measures it and releases it when the records are committed
// (Release). In one transaction, Claim claims for o, until lease from now,
// each config of cfgs that another run holds (see claim.holds) and that
// no record measured at or after since holds, and returns which of cfgs it
// could not claim. since is when o's run read what was measured before it
// (Measured). o's own claims are renewed.
func (db *DB) Claim(w Workload, cfgs []schedule.Config, o Owner, since time.Time, lease time.Duration) (taken []bool, err error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	now := time.Now()
	host, _ := os.Hostname()
	mine, err := json.Marshal(claim{Owner: o, From: now, Until: now.Add(lease)})
	if err != nil {
		return nil, err
	}
	taken = make([]bool, len(cfgs))
	err = db.update(func(tx *bbolt.Tx) error {
		cb, err := tx.CreateBucketIfNotExists(bucketClaims)
		if err != nil {
			return err
		}
		b, err := db.buckets(tx, []byte(w.Key()))
		if err != nil {
			return err
		}
		for i, c := range cfgs {
			k := claimKey(w, c)
			if v := cb.Get(k); v != nil {
				var old claim
				if err := json.Unmarshal(v, &old); err != nil {
					return db.corrupt(fmt.Sprintf("claim %q: %v", k, err))
				}
				if old.Owner != o && old.holds(b.records, c, since, now, host) {
					taken[i] = true
					continue
				}
			}
			if measuredSince(b.records, c, since) {
				taken[i] = true
				continue
			}
			if err := cb.Put(k, mine); err != nil {
				return err
			}
		}
		return nil
	})
	return taken, err
}

// Release ends o's claims on cfgs of w. A config with a record measured
// since it was claimed keeps its claim, marked done, so that a run that
// started before the records were committed, and proposes the config
// later, knows it was measured after it read the database; the claim of
// a config left unmeasured (its batch was interrupted) is dropped.
func (db *DB) Release(w Workload, cfgs []schedule.Config, o Owner) error {
	if err := w.Validate(); err != nil {
		return err
	}
	now := time.Now()
	return db.update(func(tx *bbolt.Tx) error {
		cb := tx.Bucket(bucketClaims)
		if cb == nil {
			return nil
		}
		b, err := db.buckets(tx, []byte(w.Key()))
		if err != nil {
			return err
		}
		for _, c := range cfgs {
			k := claimKey(w, c)
			var cl claim
			if v := cb.Get(k); v == nil || json.Unmarshal(v, &cl) != nil || cl.Owner != o {
				continue
			}
			if !measuredSince(b.records, c, cl.From) {
				if err := cb.Delete(k); err != nil {
					return err
				}
				continue
			}
			cl.Until, cl.Done = time.Time{}, now
			v, err := json.Marshal(cl)
			if err != nil {
				return err
			}
			if err := cb.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// claimKey is the key of c's claim: the workload's key, a NUL, and the
// config's text, neither of which contains a NUL.
func claimKey(w Workload, c schedule.Config) []byte {
	return []byte(w.Key() + "\x00" + c.String())
}

// measuredSince reports whether the records bucket rb (nil when the
// workload has none) holds a record of c measured at or after since. The
// records of c are adjacent, keyed by its text, a NUL and their time.
func measuredSince(rb *bbolt.Bucket, c schedule.Config, since time.Time) bool {
	if rb == nil {
		return false
	}
	prefix := []byte(c.String() + "\x00")
	cur := rb.Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		if len(k) == len(prefix)+8 && int64(binary.BigEndian.Uint64(k[len(prefix):])) >= since.UnixNano() {
			return true
		}
	}
	return false
}
