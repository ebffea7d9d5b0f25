package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure"
)

// Format is the version of the job and result messages; a worker refuses a
// job of another format. Format 2 put the worker's name in the subject of
// its results (resultSubject).
const Format = 2

// Names of the JetStream assets and subject prefixes.
const (
	JobsStream    = "AUTOTUNE_JOBS"
	ResultsStream = "AUTOTUNE_RESULTS"
	GivenUpStream = "AUTOTUNE_GIVEN_UP"
	WorkersBucket = "autotune_workers"

	jobsPrefix    = "autotune.jobs."
	resultsPrefix = "autotune.results."
	// The server's advisories of the jobs delivered MaxDeliver times
	// without an acknowledgement, followed by the consumer's name.
	givenUpPrefix = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + JobsStream + "."
)

// MaxDeliver is how many times a job is delivered before it is given up as
// a crash of its config.
const MaxDeliver = 3

// maxJobBytes bounds a job message; a job is a config and a workload, a few
// hundred bytes, so anything much larger is not one.
const maxJobBytes = 64 << 10

// registrationTTL is how long a worker's entry outlives its last refresh.
// Tests shorten it.
var registrationTTL = 30 * time.Second

// Hash returns the short hash of a device fingerprint that names its jobs
// subject and consumer: fingerprints hold spaces, slashes and dots, which
// subjects cannot.
func Hash(fingerprint string) string {
	sum := sha256.Sum256([]byte(fingerprint))
	return hex.EncodeToString(sum[:8])
}

// Subject returns the jobs subject of a device fingerprint.
func Subject(fingerprint string) string { return jobsPrefix + Hash(fingerprint) }

func consumerName(fingerprint string) string { return "workers-" + Hash(fingerprint) }

// directSubject is the subject of the jobs sent to the worker named name
// alone, and directConsumer the consumer through which it takes them: the
// tuner has a config measured again on another worker than the one that
// found it (Measurer.MeasureExcept).
func directSubject(fingerprint, name string) string { return Subject(fingerprint) + "." + name }

func directConsumer(name string) string { return "to-" + name }

// resultSubject is where the worker named name publishes the results of
// a batch. A broker with credentials lets a worker publish under its own
// name only, so the name the tuner reads from the subject is the one the
// broker authenticated.
func resultSubject(batch, name string) string { return resultsPrefix + batch + "." + name }

// registrationKey is the key of a worker's registration: its device's
// hash, its name (which a broker with credentials checks, as for results)
// and the instance, since two processes may share a name.
func registrationKey(fingerprint, name, instance string) string {
	return Hash(fingerprint) + "." + name + "." + instance
}

// A job is one config of a batch to measure.
type job struct {
	Format   int         `json:"format"`
	ID       string      `json:"id"`    // batch "." index; the results' message ID
	Batch    string      `json:"batch"` // the results subject's last token
	Index    int         `json:"index"` // of the config in its batch
	Of       int         `json:"of"`    // configs in the batch; 0 (a tuner before it was sent) means unknown
	Op       string      `json:"op"`
	Shape    []int       `json:"shape"`
	DType    dtype.DType `json:"dtype"`
	Device   string      `json:"device"` // fingerprint
	Template string      `json:"template"`
	Config   string      `json:"config"` // schedule.Config.String
	BestNS   int64       `json:"best_ns,omitempty"`
}

// A result is a job's measurement, published by the worker that ran it;
// Result.Measurer says who the worker claims to be.
type result struct {
	Format int            `json:"format"`
	JobID  string         `json:"job"`
	Index  int            `json:"index"`
	Result measure.Result `json:"result"`
}

// A Registration is what a worker keeps in the workers bucket.
type Registration struct {
	// Name is the worker's: its credential's when the broker has
	// credentials (read from the key, which the broker checks), a random
	// token otherwise.
	Name        string    `json:"name"`
	ID          string    `json:"id"` // the instance
	Tool        string    `json:"tool,omitempty"`
	Fingerprint string    `json:"fingerprint"`
	Host        string    `json:"host"`
	PID         int       `json:"pid"`
	Started     time.Time `json:"started"`
	JobsDone    int64     `json:"jobs_done"`
}

// Setup creates the jobs, results and given-up streams and the workers
// bucket where they are missing, and leaves existing ones as they are (an operator may
// have tuned their limits, and updating a stream that workers are using is
// needless churn). Measurers and workers call it; it is idempotent.
func Setup(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:      JobsStream,
		Subjects:  []string{jobsPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy,
		MaxAge:    24 * time.Hour,
	}); err != nil {
		return nil, fmt.Errorf("remote: jobs stream: %w", err)
	}
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:       ResultsStream,
		Subjects:   []string{resultsPrefix + ">"},
		MaxAge:     24 * time.Hour,
		Duplicates: 10 * time.Minute,
	}); err != nil {
		return nil, fmt.Errorf("remote: results stream: %w", err)
	}
	if err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name:     GivenUpStream,
		Subjects: []string{givenUpPrefix + "*"},
		MaxAge:   24 * time.Hour,
	}); err != nil {
		return nil, fmt.Errorf("remote: given-up stream: %w", err)
	}
	kv, err := js.KeyValue(ctx, WorkersBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: WorkersBucket, TTL: registrationTTL})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, WorkersBucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("remote: workers bucket: %w", err)
	}
	return kv, nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	_, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			err = nil // created by another process meanwhile
		}
	}
	return err
}
