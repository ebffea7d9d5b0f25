package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Roles of a credential.
const (
	RoleTuner  = "tuner"
	RoleWorker = "worker"
)

// TunerName is the name of the tuner's credential, which the tuner and
// 'autotune workers' use.
const TunerName = "tuner"

// A Credential is one member of a fleet as the broker knows it: an nkey
// pair (the broker needs only its public half; the member signs with the
// seed), a name, and a role that sets what it may do (Permissions). A
// worker's credential may be bound to the hash of one device fingerprint
// (Hash), and then takes the jobs of that device only.
type Credential struct {
	Name   string `json:"name"`
	Role   string `json:"role"`
	Device string `json:"device,omitempty"` // Hash of the fingerprint a worker is bound to; "" means any
	Seed   string `json:"seed"`             // nkey user seed: keep secret
}

// NewCredential returns a credential with a fresh nkey pair.
func NewCredential(name, role, device string) (Credential, error) {
	c := Credential{Name: name, Role: role, Device: device}
	if err := c.checkNames(); err != nil {
		return Credential{}, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Credential{}, fmt.Errorf("remote: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return Credential{}, fmt.Errorf("remote: %w", err)
	}
	c.Seed = string(seed)
	return c, nil
}

// checkNames checks what ends up in subjects and permissions: a name or
// device with a dot or a wildcard would widen what the credential may do.
func (c Credential) checkNames() error {
	switch {
	case c.Role != RoleTuner && c.Role != RoleWorker:
		return fmt.Errorf("remote: credential %q: unknown role %q", c.Name, c.Role)
	case !validToken(c.Name) || len(c.Name) > 64:
		return fmt.Errorf("remote: credential name %q: want up to 64 letters, digits, '-' or '_'", c.Name)
	case c.Device != "" && !validToken(c.Device):
		return fmt.Errorf("remote: credential %q: device %q is not a fingerprint hash", c.Name, c.Device)
	case c.Role == RoleTuner && c.Name != TunerName:
		return fmt.Errorf("remote: the tuner's credential is named %q, not %q", TunerName, c.Name)
	case c.Role == RoleWorker && c.Name == TunerName:
		return fmt.Errorf("remote: a worker may not be named %q", TunerName)
	}
	return nil
}

// public returns the public key of c's seed.
func (c Credential) public() (string, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return "", fmt.Errorf("remote: credential %q: %w", c.Name, err)
	}
	defer kp.Wipe()
	return kp.PublicKey()
}

// Write stores c in path, readable by its owner only, refusing to replace
// an existing file.
func (c Credential) Write(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

// ReadCredential reads a credential that Write stored. It refuses a file
// that others can read: the seed is the identity.
func ReadCredential(path string) (Credential, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Credential{}, fmt.Errorf("remote: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Credential{}, fmt.Errorf("remote: %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Credential{}, fmt.Errorf("remote: %w", err)
	}
	var c Credential
	if err := json.Unmarshal(data, &c); err != nil {
		return Credential{}, fmt.Errorf("remote: %s is not a credential: %w", path, err)
	}
	if err := c.checkNames(); err != nil {
		return Credential{}, fmt.Errorf("%w (in %s)", err, path)
	}
	if _, err := c.public(); err != nil {
		return Credential{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return c, nil
}

// CredentialFile is the name of a credential's file in a broker's
// credentials directory.
func CredentialFile(name string) string { return name + ".key" }

// EnsureCredentials makes dir hold a credential for the tuner and one for
// each worker of workers ("name", or "name@hash" to bind it to a device),
// creating those missing, and returns every credential in dir (those
// created earlier included): what the broker admits.
func EnsureCredentials(dir string, workers []string) ([]Credential, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	want := []Credential{{Name: TunerName, Role: RoleTuner}}
	for _, w := range workers {
		name, dev, _ := strings.Cut(w, "@")
		want = append(want, Credential{Name: name, Role: RoleWorker, Device: dev})
	}
	for _, c := range want {
		path := filepath.Join(dir, CredentialFile(c.Name))
		if _, err := os.Stat(path); err == nil {
			continue
		}
		n, err := NewCredential(c.Name, c.Role, c.Device)
		if err != nil {
			return nil, err
		}
		if err := n.Write(path); err != nil {
			return nil, err
		}
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.key"))
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	slices.Sort(paths)
	var out []Credential
	for _, p := range paths {
		c, err := ReadCredential(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Options returns the connection options that authenticate as c: its
// nkey, and an inbox prefix of its own, to which its permissions limit
// what it may subscribe to, so that no member reads the replies and
// deliveries of another.
func (c Credential) Options() ([]nats.Option, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return nil, fmt.Errorf("remote: credential %q: %w", c.Name, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	return []nats.Option{nats.Nkey(pub, kp.Sign), nats.CustomInboxPrefix(inboxPrefix(c.Name))}, nil
}

func inboxPrefix(name string) string { return "_INBOX_" + name }

// Permissions returns what c may publish and subscribe to. The tuner may
// publish jobs and use the JetStream API; a worker may take the jobs of
// its device (any device when it is not bound to one) and those sent to
// it by name, acknowledge them, publish results under its own name,
// register under its own name and read the workers bucket. Results and
// registrations carry the worker's name in their subjects, so a name read
// from a subject is one the broker authenticated.
func (c Credential) Permissions() *server.Permissions {
	inbox := &server.SubjectPermission{Allow: []string{inboxPrefix(c.Name) + ".>"}}
	if c.Role == RoleTuner {
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{jobsPrefix + ">", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>"}},
			Subscribe: inbox,
		}
	}
	// An unbound worker's device, and so its shared consumer's name, is
	// any single token.
	dev, shared, n := c.Device, "workers-"+c.Device, c.Name
	if dev == "" {
		dev, shared = "*", "*"
	}
	direct := directConsumer(n)
	api := "$JS.API."
	kv := "KV_" + WorkersBucket
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			api + "INFO",
			api + "STREAM.INFO." + JobsStream, api + "STREAM.INFO." + ResultsStream,
			api + "STREAM.INFO." + GivenUpStream, api + "STREAM.INFO." + kv,
			api + "CONSUMER.CREATE." + JobsStream + "." + shared + "." + jobsPrefix + dev,
			api + "CONSUMER.CREATE." + JobsStream + "." + direct + "." + jobsPrefix + dev + "." + n,
			api + "CONSUMER.INFO." + JobsStream + "." + shared, api + "CONSUMER.INFO." + JobsStream + "." + direct,
			api + "CONSUMER.MSG.NEXT." + JobsStream + "." + shared, api + "CONSUMER.MSG.NEXT." + JobsStream + "." + direct,
			"$JS.ACK." + JobsStream + "." + shared + ".>", "$JS.ACK." + JobsStream + "." + direct + ".>",
			resultsPrefix + "*." + n,
			"$KV." + WorkersBucket + "." + dev + "." + n + ".*",
			api + "CONSUMER.CREATE." + kv + ".>", api + "CONSUMER.DELETE." + kv + ".>", api + "CONSUMER.INFO." + kv + ".>",
			api + "DIRECT.GET." + kv + ".>", api + "STREAM.MSG.GET." + kv,
			"$JS.FC." + kv + ".>",
		}},
		Subscribe: inbox,
	}
}

// nkeyUsers returns the users a broker admits for creds.
func nkeyUsers(creds []Credential) ([]*server.NkeyUser, error) {
	if len(creds) == 0 {
		return nil, errors.New("remote: no credentials to admit")
	}
	var users []*server.NkeyUser
	for _, c := range creds {
		pub, err := c.public()
		if err != nil {
			return nil, err
		}
		users = append(users, &server.NkeyUser{Nkey: pub, Permissions: c.Permissions()})
	}
	return users, nil
}
