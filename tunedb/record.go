package tunedb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// SchemaVersion is the version of Record, of the export format and of the
// database layout. Bump it when any of them changes; every older version
// stays readable.
//
// Version 2 added Workload.Toolchain; a record of version 1 has none, and
// reads as of an unknown toolchain (""). Version 3 added Record.Registers,
// LocalBytes, Disturbance and Measurer; an older record has none of them,
// and reads as measured by an unknown process with unknown disturbance.
// Version 4 added lines of tuned ranges (Range) to the export; its
// records are those of version 3.
const SchemaVersion = 4

// Workload identifies what was tuned. Records of different template versions,
// devices, dtypes or toolchains never mix.
type Workload struct {
	Op       string      `json:"op"`       // "softmax"
	Shape    []int       `json:"shape"`    // [4096, 1024]
	DType    dtype.DType `json:"dtype"`    // "f32"
	Device   string      `json:"device"`   // device fingerprint, e.g. "cpu/Intel(R) Xeon(R) .../sse4.2+avx2+fma+avx512/2c"
	Template string      `json:"template"` // template version hash; changes when the template's code or knob space changes
	// Toolchain names what built the kernels besides the template, since
	// it changes their speed too: "go1.26.0" (the Go that built CPU
	// candidates), "nvrtc12.4" (CUDA). "" is unknown: records written
	// before workloads named a toolchain, or a measurer that cannot say.
	Toolchain string `json:"toolchain,omitempty"`
}

// Key returns the database key of w: op, shape, dtype, device and template
// separated by single spaces, e.g.
//
//	softmax 4096x1024 f32 cpu/Intel(R) Xeon(R) Gold 6130/avx2+fma/2c 3f2a9c1d
//
// then, when w names a toolchain, a tab and the toolchain. Only the device
// may contain spaces, and no field a tab (see Validate), so the first three
// fields and the template are delimited without doubt and two valid
// workloads share a key only when they are equal. The order puts the
// template and toolchain last so that the versions of one workload sort
// together, and a workload of unknown toolchain (every one written before
// schema 2) keeps the key it always had.
func (w Workload) Key() string {
	k := strings.Join([]string{w.Op, w.ShapeString(), string(w.DType), w.Device, w.Template}, " ")
	if w.Toolchain != "" {
		k += "\t" + w.Toolchain
	}
	return k
}

// SameButToolchain reports whether w and o are the same workload built by
// any toolchain: equal in everything but Toolchain.
func (w Workload) SameButToolchain(o Workload) bool {
	o.Toolchain = w.Toolchain
	return w.equal(o)
}

// ShapeString returns the dimensions joined by "x", e.g. "4096x1024".
func (w Workload) ShapeString() string {
	dims := make([]string, len(w.Shape))
	for i, d := range w.Shape {
		dims[i] = strconv.Itoa(d)
	}
	return strings.Join(dims, "x")
}

// Validate reports whether w can be stored: op, dtype, device and template
// are non-empty UTF-8 without control characters, op, dtype and template have
// no spaces (Key relies on it), the toolchain is empty or such a word too,
// and the shape has at least one dimension, each at least 1.
func (w Workload) Validate() error {
	if err := w.check(); err != nil {
		return fmt.Errorf("tunedb: invalid workload: %w", err)
	}
	return nil
}

func (w Workload) check() error {
	fields := []struct {
		name, val string
		spaces    bool
	}{
		{"op", w.Op, false},
		{"dtype", string(w.DType), false},
		{"device", w.Device, true},
		{"template", w.Template, false},
	}
	for _, f := range fields {
		bad := func(r rune) bool { return unicode.IsControl(r) || !f.spaces && unicode.IsSpace(r) }
		switch {
		case f.val == "":
			return fmt.Errorf("%s is empty", f.name)
		case !utf8.ValidString(f.val):
			// JSON would replace the invalid bytes, so an exported record
			// would come back under another key.
			return fmt.Errorf("%s %q is not UTF-8", f.name, f.val)
		case strings.ContainsFunc(f.val, bad):
			if f.spaces {
				return fmt.Errorf("%s %q contains a control character", f.name, f.val)
			}
			return fmt.Errorf("%s %q contains a space or control character", f.name, f.val)
		}
	}
	if w.Toolchain != "" {
		if !utf8.ValidString(w.Toolchain) || strings.ContainsFunc(w.Toolchain, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
			return fmt.Errorf("toolchain %q is not UTF-8 without spaces or control characters", w.Toolchain)
		}
	}
	if len(w.Shape) == 0 {
		return errors.New("shape has no dimensions")
	}
	for i, d := range w.Shape {
		if d < 1 {
			return fmt.Errorf("shape %v: dimension %d is %d, want at least 1", w.Shape, i, d)
		}
	}
	return nil
}

func (w Workload) equal(o Workload) bool {
	return w.Op == o.Op && slices.Equal(w.Shape, o.Shape) && w.DType == o.DType &&
		w.Device == o.Device && w.Template == o.Template && w.Toolchain == o.Toolchain
}

// Status is the outcome of measuring one config: measure.Status, whose
// closed list the database stores as it is. A new kind of failure is a
// schema change.
type Status = measure.Status

// The statuses by name, so that readers of the database need not import
// measure; their values and meanings are measure's.
const (
	StatusOK           = measure.StatusOK
	StatusInvalid      = measure.StatusInvalid
	StatusBuildError   = measure.StatusBuildError
	StatusRuntimeError = measure.StatusRuntimeError
	StatusCrash        = measure.StatusCrash
	StatusTimeout      = measure.StatusTimeout
	StatusWrongAnswer  = measure.StatusWrongAnswer
)

// Statuses returns every status, in the order of their declaration.
func Statuses() []Status { return measure.Statuses() }

// Record is one measurement of one config of one workload. Failures are
// records too: they keep a config from being measured again.
type Record struct {
	Schema    int             `json:"schema"`
	Workload  Workload        `json:"workload"`
	Config    schedule.Config `json:"config"`
	Status    Status          `json:"status"`
	Error     string          `json:"error,omitempty"`
	SamplesNS []float64       `json:"samples_ns,omitempty"` // every timed sample, ns per call
	MedianNS  float64         `json:"median_ns,omitempty"`
	P20NS     float64         `json:"p20_ns,omitempty"`
	P80NS     float64         `json:"p80_ns,omitempty"`
	BuildNS   int64           `json:"build_ns"` // build time attributed to this record
	RunNS     int64           `json:"run_ns"`   // run time attributed to this record
	Time      time.Time       `json:"time"`     // when measured, UTC
	Tool      string          `json:"tool"`     // autotune version that measured it

	// Registers and LocalBytes are what the compiler gave a GPU kernel:
	// 32-bit registers and local memory bytes per thread; 0 when unknown or
	// not a GPU kernel.
	Registers  int `json:"registers,omitempty"`
	LocalBytes int `json:"local_bytes,omitempty"`
	// Disturbance is the evidence of contention while the samples were
	// taken; nil when unknown.
	Disturbance *measure.Disturbance `json:"disturbance,omitempty"`
	// Measurer says who measured; nil when unknown (every record before
	// schema 3) or the tuner's own process did not say.
	Measurer *measure.Measurer `json:"measurer,omitempty"`
	// Suspect, on an ok record, says why its timing is not trusted: the
	// tuner measured the config again on another measurer and the figures
	// disagreed beyond their spreads, and no third measurement sided with
	// this one. A suspect record never ranks a config (TopK, Best); it is
	// kept, as evidence against its measurer ('autotune workers --db').
	// It is the one field set after a record is stored: committing a
	// stored record again with Suspect set marks it.
	Suspect string `json:"suspect,omitempty"`
}

func (r *Record) check() error {
	switch {
	case r.Schema > SchemaVersion:
		return fmt.Errorf("record schema %d is newer than this autotune's (%d): upgrade autotune", r.Schema, SchemaVersion)
	case r.Schema < 1:
		return fmt.Errorf("unknown record schema %d", r.Schema)
	}
	if err := r.Workload.check(); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if !r.Status.Valid() {
		return fmt.Errorf("unknown status %q", r.Status)
	}
	if r.Time.IsZero() {
		return errors.New("time is not set")
	}
	// The key holds the time as UnixNano, which is exact only in this range.
	if n := r.Time.UnixNano(); n <= 0 || !time.Unix(0, n).Equal(r.Time) {
		return fmt.Errorf("time %s is outside 1970..2262", r.Time)
	}
	// Best compares medians; an ok record without one would win every time.
	if r.Status == StatusOK && !(r.MedianNS > 0 && r.MedianNS < math.Inf(1)) {
		return fmt.Errorf("status ok needs a positive median_ns, not %v", r.MedianNS)
	}
	switch {
	case len(r.Error) > MaxErrorBytes:
		return fmt.Errorf("error is %d bytes, over %d", len(r.Error), MaxErrorBytes)
	case len(r.Tool) > maxToolBytes:
		return fmt.Errorf("tool is %d bytes, over %d", len(r.Tool), maxToolBytes)
	case len(r.SamplesNS) > MaxSamples:
		return fmt.Errorf("%d samples, over %d", len(r.SamplesNS), MaxSamples)
	case r.BuildNS < 0:
		return fmt.Errorf("build_ns is %d", r.BuildNS)
	case r.RunNS < 0:
		return fmt.Errorf("run_ns is %d", r.RunNS)
	case r.Registers < 0:
		return fmt.Errorf("registers is %d", r.Registers)
	case r.LocalBytes < 0:
		return fmt.Errorf("local_bytes is %d", r.LocalBytes)
	}
	if err := checkDisturbance(r.Disturbance); err != nil {
		return fmt.Errorf("disturbance: %w", err)
	}
	switch {
	case r.Suspect != "" && r.Status != StatusOK:
		return fmt.Errorf("suspect on a record of status %s: only a timing can be suspect", r.Status)
	case len(r.Suspect) > MaxErrorBytes:
		return fmt.Errorf("suspect is %d bytes, over %d", len(r.Suspect), MaxErrorBytes)
	}
	if err := checkMeasurer(r.Measurer); err != nil {
		return fmt.Errorf("measurer: %w", err)
	}
	return r.checkStatistics()
}

// checkDisturbance checks that d, when present, counts what it can count.
func checkDisturbance(d *measure.Disturbance) error {
	switch {
	case d == nil:
		return nil
	case d.Samples < 0 || d.Disturbed < 0 || d.Disturbed > d.Samples:
		return fmt.Errorf("%d of %d samples disturbed", d.Disturbed, d.Samples)
	case !(d.CPUShare >= 0 && d.CPUShare < math.Inf(1)):
		return fmt.Errorf("cpu_share is %v", d.CPUShare)
	case d.StealNS < 0:
		return fmt.Errorf("steal_ns is %d", d.StealNS)
	case d.InvoluntarySwitches < 0:
		return fmt.Errorf("involuntary_switches is %d", d.InvoluntarySwitches)
	case !(d.Probe >= 0 && d.Probe < math.Inf(1)):
		return fmt.Errorf("probe is %v", d.Probe)
	}
	return nil
}

// checkMeasurer checks that m, when present, names its measurer in short
// printable words: they are shown in tables and come from other machines.
func checkMeasurer(m *measure.Measurer) error {
	if m == nil {
		return nil
	}
	for _, f := range []struct{ name, val string }{{"name", m.Name}, {"host", m.Host}, {"tool", m.Tool}} {
		switch {
		case len(f.val) > maxToolBytes:
			return fmt.Errorf("%s is %d bytes, over %d", f.name, len(f.val), maxToolBytes)
		case !utf8.ValidString(f.val) || strings.ContainsFunc(f.val, unicode.IsControl):
			return fmt.Errorf("%s %q is not UTF-8 without control characters", f.name, f.val)
		}
	}
	return nil
}

// MaxErrorBytes and MaxSamples bound a record's error message and samples.
// The tuner's records stay far below (it clips error messages to a few KiB,
// and takes tens of samples); a record over them is damage or forgery, and
// would cost every reader of the database its size.
const (
	MaxErrorBytes = 64 << 10
	MaxSamples    = 100_000
	maxToolBytes  = 256
)

// checkStatistics checks that the statistics agree with each other and with
// the samples: a median the samples do not have would rank a config by a
// time nobody measured.
func (r *Record) checkStatistics() error {
	for i, x := range r.SamplesNS {
		if !(x > 0 && x < math.Inf(1)) {
			return fmt.Errorf("sample %d is %v, want a positive number of ns", i, x)
		}
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"median_ns", r.MedianNS}, {"p20_ns", r.P20NS}, {"p80_ns", r.P80NS}} {
		if !(f.x >= 0 && f.x < math.Inf(1)) {
			return fmt.Errorf("%s is %v", f.name, f.x)
		}
	}
	var sorted []float64
	if len(r.SamplesNS) > 0 {
		sorted = slices.Sorted(slices.Values(r.SamplesNS))
		if m := median(sorted); !near(r.MedianNS, m) {
			return fmt.Errorf("median_ns %v is not the median of the samples, %v", r.MedianNS, m)
		}
	}
	// Zero means absent (the fields are omitted when zero); those present
	// must be in order.
	var present []float64
	for _, x := range []float64{r.P20NS, r.MedianNS, r.P80NS} {
		if x > 0 {
			present = append(present, x)
		}
	}
	if !slices.IsSorted(present) {
		return fmt.Errorf("p20_ns %v, median_ns %v and p80_ns %v are out of order", r.P20NS, r.MedianNS, r.P80NS)
	}
	if len(sorted) == 0 {
		return nil
	}
	first, last := sorted[0], sorted[len(sorted)-1]
	for _, f := range []struct {
		name string
		x    float64
	}{{"p20_ns", r.P20NS}, {"p80_ns", r.P80NS}} {
		if f.x != 0 && !(near(f.x, first) || near(f.x, last) || first <= f.x && f.x <= last) {
			return fmt.Errorf("%s %v is outside the samples' range %v..%v", f.name, f.x, first, last)
		}
	}
	return nil
}

// median is the median of sorted s, the mean of the middle two for an even
// length, as the measurer computes it.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + 0.5*(s[n/2]-s[n/2-1])
}

// near reports whether a and b agree to within rounding: the statistics
// pass through JSON and other arithmetic than ours.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}

// entry is a validated record in its stored form.
type entry struct {
	rec  Record
	wkey []byte // workload key
	key  []byte // record key
	val  []byte // record JSON
}

func prepare(r Record) (entry, error) {
	r.Time = r.Time.UTC()
	if err := r.check(); err != nil {
		return entry{}, err
	}
	val, err := marshal(r)
	if err != nil {
		return entry{}, err
	}
	return entry{rec: r, wkey: []byte(r.Workload.Key()), key: recordKey(r.Config, r.Time), val: val}, nil
}

// recordKey is the identity of a record within its workload. Config text has
// no NUL, so text+NUL is a prefix shared by exactly the records of a config.
func recordKey(c schedule.Config, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(configPrefix(c), uint64(t.UnixNano()))
}

func configPrefix(c schedule.Config) []byte {
	return append([]byte(c.String()), 0)
}

// marksSuspect reports whether the record JSON val is the stored record
// old with Suspect newly set: the one change a stored record may take.
func marksSuspect(old, val []byte) bool {
	var o, n Record
	if json.Unmarshal(old, &o) != nil || json.Unmarshal(val, &n) != nil || o.Suspect != "" || n.Suspect == "" {
		return false
	}
	n.Suspect = ""
	ob, err1 := marshal(o)
	nb, err2 := marshal(n)
	return err1 == nil && err2 == nil && bytes.Equal(ob, nb)
}

// rank returns the latest ok record of each config among recs, fastest
// first; at[i] is the time recs[i] counts as measured at. The latest, not
// the fastest: a config measured again (the tuner re-measures its leaders,
// interleaved, before it declares a winner) is known better by its newer
// measurement, and taking the minimum of noisy medians would favour
// whichever config got lucky once. A suspect record does not count: a
// config whose only ok records are suspect is not ranked. Ties keep the
// order of recs, so the result is deterministic.
func rank(recs []Record, at []time.Time) []Record {
	var best []Record
	var bestAt []time.Time
	pos := make(map[string]int)
	for i, r := range recs {
		if r.Status != StatusOK || r.Suspect != "" {
			continue
		}
		c := r.Config.String()
		if j, ok := pos[c]; !ok {
			pos[c] = len(best)
			best, bestAt = append(best, r), append(bestAt, at[i])
		} else if at[i].After(bestAt[j]) {
			best[j], bestAt[j] = r, at[i]
		}
	}
	slices.SortStableFunc(best, func(a, b Record) int { return cmp.Compare(a.MedianNS, b.MedianNS) })
	return best
}

// marshal is json.Marshal without HTML escaping: compiler messages are full
// of <, > and &, and exports are read by people.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
