package tunedb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a tuning database held in memory: what a simulation gives each
// of its runs, where a file fsync'd after every batch would cost more than
// the run. Its methods answer as DB's of the same name do, from the same
// checks, orders and identities: a record goes in as Commit validates it
// and comes out as DB would decode it. Nothing outlives the value.
//
// The zero Memory is empty and ready to use. It is safe for concurrent use.
type Memory struct {
	mu        sync.RWMutex
	workloads map[string]*memWorkload // by Workload.Key
	models    map[string][]byte       // by ModelKey.bytes
	ranges    map[string][]byte       // by Range.key, as DB stores them
}

// memWorkload is one workload's records, keyed as DB keys them.
type memWorkload struct {
	w     Workload
	keys  []string             // record keys, sorted: DB's storage order
	vals  map[string][]byte    // record key → the record's JSON, as DB stores it
	recs  map[string]Record    // the same, decoded
	added map[string]time.Time // record key → when it was committed here (see rank)
}

// NewMemory returns an empty in-memory database.
func NewMemory() *Memory { return &Memory{} }

// Commit stores a batch of records, all or none, as DB.Commit does.
func (m *Memory) Commit(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	es, err := prepareBatch(recs)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Check the whole batch, against the store and against itself, before
	// anything is stored.
	batch := map[string][]byte{}
	for i := range es {
		e := &es[i]
		id := string(e.wkey) + "\x00" + string(e.key)
		old, ok := batch[id]
		if !ok {
			if mw := m.workloads[string(e.wkey)]; mw != nil {
				old, ok = mw.vals[string(e.key)]
			}
		}
		if ok && !bytes.Equal(old, e.val) && !marksSuspect(old, e.val) {
			return fmt.Errorf("tunedb: commit record %d: %s config %s at %s is already stored with different content",
				i, e.wkey, e.rec.Config, e.rec.Time.Format(time.RFC3339Nano))
		}
		batch[id] = e.val
	}
	if m.workloads == nil {
		m.workloads = map[string]*memWorkload{}
	}
	now := time.Now().UTC()
	for i := range es {
		e := &es[i]
		mw := m.workloads[string(e.wkey)]
		k := string(e.key)
		stored := mw != nil && mw.vals[k] != nil
		if stored && bytes.Equal(mw.vals[k], e.val) {
			continue
		}
		// Decoded from its JSON, as DB reads it back.
		var r Record
		if err := json.Unmarshal(e.val, &r); err != nil {
			return fmt.Errorf("tunedb: %w", err)
		}
		if stored { // marked suspect
			mw.vals[k], mw.recs[k] = e.val, r
			continue
		}
		if mw == nil {
			w := r.Workload
			w.Shape = slices.Clone(w.Shape)
			mw = &memWorkload{w: w, vals: map[string][]byte{}, recs: map[string]Record{}, added: map[string]time.Time{}}
			m.workloads[string(e.wkey)] = mw
		}
		at, _ := slices.BinarySearch(mw.keys, k)
		mw.keys = slices.Insert(mw.keys, at, k)
		mw.vals[k], mw.recs[k], mw.added[k] = e.val, r, now
	}
	return nil
}

// records returns copies of w's records in storage order, after the checks
// DB's queries make.
func (m *Memory) records(w Workload) ([]Record, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	mw := m.workloads[w.Key()]
	if mw == nil {
		return nil, nil
	}
	recs, _ := mw.load()
	return recs, nil
}

// load returns copies of the records in storage order and the time each
// counts as measured at: its own, or when it was committed here if that is
// earlier, as DB ranks them.
func (mw *memWorkload) load() ([]Record, []time.Time) {
	recs := make([]Record, len(mw.keys))
	at := make([]time.Time, len(mw.keys))
	for i, k := range mw.keys {
		recs[i] = copyRecord(mw.recs[k])
		at[i] = recs[i].Time
		if added := mw.added[k]; added.Before(at[i]) {
			at[i] = added
		}
	}
	return recs, at
}

// copyRecord copies the slices of r that a caller could change.
func copyRecord(r Record) Record {
	r.Workload.Shape = slices.Clone(r.Workload.Shape)
	r.SamplesNS = slices.Clone(r.SamplesNS)
	return r
}

// Records returns every record of w, in storage order (see DB.Records).
func (m *Memory) Records(w Workload) ([]Record, error) { return m.records(w) }

// Best returns the config of w with the lowest median (see DB.Best).
func (m *Memory) Best(w Workload) (Record, bool, error) {
	top, err := m.TopK(w, 1)
	if err != nil || len(top) == 0 {
		return Record{}, false, err
	}
	return top[0], true, nil
}

// TopK returns up to k configs of w, fastest first, each as its latest ok
// record (see DB.TopK).
func (m *Memory) TopK(w Workload, k int) ([]Record, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	mw := m.workloads[w.Key()]
	if mw == nil {
		return nil, nil
	}
	top := rank(mw.load())
	return top[:max(0, min(k, len(top)))], nil
}

// Measured returns the canonical text of every config a new run of w
// should skip, by DB.Measured's rule: ok records and final failures, and
// transient failures once retried, unless retryFailed.
func (m *Memory) Measured(w Workload, retryFailed bool) (map[string]bool, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := make(map[string]bool)
	transient := make(map[string]int)
	if mw := m.workloads[w.Key()]; mw != nil {
		for _, k := range mw.keys {
			cfg, _, _ := strings.Cut(k, "\x00")
			if mw.recs[k].Status.Transient() {
				transient[cfg]++
			} else {
				seen[cfg] = true
			}
		}
	}
	for c, n := range transient {
		if n >= 2 && !retryFailed {
			seen[c] = true
		}
	}
	return seen, nil
}

// Workloads summarises every workload, sorted by Key (see DB.Workloads).
func (m *Memory) Workloads() ([]Summary, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var sums []Summary
	for _, key := range slices.Sorted(maps.Keys(m.workloads)) {
		mw := m.workloads[key]
		recs, at := mw.load()
		w := mw.w
		w.Shape = slices.Clone(w.Shape)
		s := Summary{Workload: w, Records: len(recs), ByStatus: make(map[Status]int)}
		for _, r := range recs {
			s.ByStatus[r.Status]++
		}
		if top := rank(recs, at); len(top) > 0 {
			s.Best = &top[0]
		}
		sums = append(sums, s)
	}
	return sums, nil
}

// SaveModel stores a copy of a serialised cost model under k, replacing any
// earlier one (see DB.SaveModel).
func (m *Memory) SaveModel(k ModelKey, model []byte) error {
	if k.Op == "" || k.Device == "" || k.Template == "" {
		return fmt.Errorf("tunedb: model key %+v has an empty field", k)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.models == nil {
		m.models = map[string][]byte{}
	}
	m.models[string(k.bytes())] = bytes.Clone(model)
	return nil
}

// LoadModel returns a copy of the model saved under k, if any.
func (m *Memory) LoadModel(k ModelKey) (model []byte, ok bool, err error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.models[string(k.bytes())]
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// SaveRange stores r as DB.SaveRange does.
func (m *Memory) SaveRange(r Range) error {
	if err := r.Validate(); err != nil {
		return err
	}
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ranges == nil {
		m.ranges = map[string][]byte{}
	}
	m.ranges[string(r.key())] = v
	return nil
}

// Ranges returns every saved range, in key order, as DB.Ranges does.
func (m *Memory) Ranges() ([]Range, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Range
	for _, k := range slices.Sorted(maps.Keys(m.ranges)) {
		var r Range
		if err := json.Unmarshal(m.ranges[k], &r); err != nil {
			return nil, fmt.Errorf("tunedb: range %q: %v", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}
