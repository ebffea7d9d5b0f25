package measure

// Disturbance is the evidence of contention gathered while a config's
// samples were taken: a VM's neighbours, another process or the tuner's own
// goroutines can take the cores a kernel was timed on, and a sample taken
// then says more about the machine than about the config. The measurer that
// times the samples fills it; nil means no evidence was gathered (records
// older than schema 3, or a backend that cannot say), which is not the same
// as undisturbed.
type Disturbance struct {
	// Samples is how many timed samples the evidence covers, and Disturbed
	// how many of them were judged disturbed (0 ≤ Disturbed ≤ Samples).
	// The CPU measurer takes disturbed samples again and leaves them out of
	// the result's samples when enough others were not, so Samples counts
	// more than the result keeps.
	Samples   int `json:"samples"`
	Disturbed int `json:"disturbed"`

	// CPUShare is the CPU time the process got over the samples against
	// the kernel's thread count's cores' worth of their wall time: about 1
	// when the kernel had its cores, lower when it lost them or left some
	// idle (harness.Judge). Where the thread count is not known (records
	// before it was, baselines), the median sample's CPU time per wall time
	// against that of the least disturbed samples. 0 when it could not be
	// read.
	CPUShare float64 `json:"cpu_share,omitempty"`

	// StealNS and InvoluntarySwitches are what the OS reports for the
	// interval of the samples: time the hypervisor gave this VM's CPUs to
	// others, and how often the measuring threads were preempted. 0 where
	// the OS does not say.
	StealNS             int64 `json:"steal_ns,omitempty"`
	InvoluntarySwitches int64 `json:"involuntary_switches,omitempty"`

	// Probe is how much slower a short calibration loop on every core ran
	// around the samples than its fastest run known to the measurer: 1 on
	// a quiet machine, over 1.25 when something else held a core, and
	// then every sample counts as disturbed. 0 when not run.
	Probe float64 `json:"probe,omitempty"`
}

// Contended reports whether most of the samples were disturbed: such a
// measurement says more about the machine than about the config, and must
// not decide a winner before it is taken again. Unknown evidence (nil)
// is not contended.
func (d *Disturbance) Contended() bool {
	return d != nil && 2*d.Disturbed > d.Samples
}

// Measurer names who took a measurement, so that a result can be traced to
// the process and machine that produced it and weighed against others of
// the same config: the tuner itself, or the worker of a remote run.
type Measurer struct {
	Name string `json:"name,omitempty"` // the worker's name; "" for the tuner's own process
	Host string `json:"host,omitempty"` // the host name it ran on
	Tool string `json:"tool,omitempty"` // the autotune version that measured
}
