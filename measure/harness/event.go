package harness

import (
	"encoding/json"
	"fmt"
	"io"
)

// The kinds of Event.
const (
	Ready = "ready" // the inputs are loaded; kernels follow
	Start = "start" // kernel ID is about to run
	// Checked says that kernel ID passed its check and what timing it will
	// cost: CallNS, its slowest call so far, and Calls, the calls it still
	// needs. A parent may set the kernel's deadline from them; a harness
	// need not send it.
	Checked = "checked"
	Result  = "result" // kernel ID finished: Status, Error, Reps, SamplesNS, allocations
	Round   = "round"  // a bench round: SamplesNS holds one sample of every entry, in entry order
	Done    = "done"   // every kernel asked for has a result
)

// Statuses of a result, the values of measure.Status that a harness
// reports.
const (
	StatusOK          = "ok"
	StatusWrongAnswer = "wrong_answer"
	StatusCrash       = "crash"
)

// An Event is one line of the protocol. ID is -1 for events of the whole
// run (ready, round, done).
type Event struct {
	ID        int       `json:"id"`
	Event     string    `json:"event"`
	Status    string    `json:"status,omitempty"`
	Error     string    `json:"error,omitempty"`
	Reps      int       `json:"reps,omitempty"`    // calls per sample
	CallNS    float64   `json:"call_ns,omitempty"` // checked: the slowest call of the check
	Calls     int       `json:"calls,omitempty"`   // checked: the calls timing will make
	SamplesNS []float64 `json:"samples_ns,omitempty"`

	// AllocBytes and Allocs are the heap bytes and objects one call of a
	// bench entry allocates; tuning does not count them.
	AllocBytes uint64 `json:"alloc_bytes,omitempty"`
	Allocs     uint64 `json:"allocs,omitempty"`

	// Evidence is how disturbed a tuning result's samples were; nil when
	// the harness gathered none. ProbeNS is the fastest run of the
	// calibration probe the harness has seen, which the parent passes on
	// to the next harness as the probe's best.
	Evidence *Evidence `json:"evidence,omitempty"`
	ProbeNS  float64   `json:"probe_ns,omitempty"`

	// Usage is what the process used over each sample of a bench round,
	// in entry order, for the parent to judge (Judge); nil when unknown.
	Usage []Sample `json:"usage,omitempty"`
}

// A Sender writes events, one line and one write each, so that the parent
// has every line before the next kernel can kill the process.
type Sender struct{ W io.Writer }

// Send writes e. It returns the writer's error: the parent is gone.
func (s Sender) Send(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = s.W.Write(append(b, '\n'))
	return err
}

// Decode parses a line of a harness's stdout; ok is false for a line that
// is not an event (a kernel that wrote to fd 1 directly).
func Decode(line []byte) (e Event, ok bool) {
	if json.Unmarshal(line, &e) != nil || e.Event == "" {
		return Event{}, false
	}
	return e, true
}

// A Sequence follows the events of one harness and says whether each is
// in order: ready first, then for each kernel start, at most one checked
// and its result, the
// rounds of a bench after every result, done last. The zero value expects
// ready.
type Sequence struct {
	ready, done bool
	cur         int  // the kernel running: its ID, -1 for none
	checked     bool // the kernel running has sent checked
	started     int  // kernels started
}

// Running returns the ID of the kernel that has started and has no result
// yet, and whether there is one.
func (s *Sequence) Running() (id int, ok bool) {
	return s.cur, s.ready && s.cur >= 0
}

// Started returns how many kernels have started.
func (s *Sequence) Started() int { return s.started }

// Ready reports whether ready was seen; Done whether done was.
func (s *Sequence) Ready() bool { return s.ready }
func (s *Sequence) Done() bool  { return s.done }

// Next takes e and returns an error when it is out of order. A result must
// carry a status, and an ok result samples or calls per sample.
func (s *Sequence) Next(e Event) error {
	_, running := s.Running()
	switch {
	case s.done:
	case e.Event == Ready && !s.ready:
		s.ready, s.cur = true, -1
		return nil
	case !s.ready:
	case e.Event == Start && !running && e.ID >= 0:
		s.cur, s.checked = e.ID, false
		s.started++
		return nil
	case e.Event == Checked && running && e.ID == s.cur && !s.checked:
		if !(e.CallNS > 0) || e.Calls <= 0 {
			return fmt.Errorf("harness: checked of %d without a call time or calls", e.ID)
		}
		s.checked = true
		return nil
	case e.Event == Result && running && e.ID == s.cur:
		switch e.Status {
		case StatusOK:
			if len(e.SamplesNS) == 0 && e.Reps <= 0 {
				return fmt.Errorf("harness: result of %d is ok without samples", e.ID)
			}
		case StatusWrongAnswer, StatusCrash:
		default:
			return fmt.Errorf("harness: result of %d has status %q", e.ID, e.Status)
		}
		s.cur = -1
		return nil
	case e.Event == Round && !running && len(e.SamplesNS) > 0:
		return nil
	case e.Event == Done && !running:
		s.done = true
		return nil
	}
	return fmt.Errorf("harness: unexpected %s event (id %d) after %d kernels started", e.Event, e.ID, s.started)
}
