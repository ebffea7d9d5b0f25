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
	Samples   int `json:"samples"`
	Disturbed int `json:"disturbed"`

	// CPUShare is the median over the samples of the CPU time the kernel's
	// threads got against the wall time times the goroutines it ran on:
	// about 1 when it had its cores to itself, lower when they were taken.
	// 0 when it could not be read.
	CPUShare float64 `json:"cpu_share,omitempty"`

	// StealNS and InvoluntarySwitches are what the OS reports for the
	// interval of the samples: time the hypervisor gave this VM's CPUs to
	// others, and how often the measuring threads were preempted. 0 where
	// the OS does not say.
	StealNS             int64 `json:"steal_ns,omitempty"`
	InvoluntarySwitches int64 `json:"involuntary_switches,omitempty"`
}

// Measurer names who took a measurement, so that a result can be traced to
// the process and machine that produced it and weighed against others of
// the same config: the tuner itself, or the worker of a remote run.
type Measurer struct {
	Name string `json:"name,omitempty"` // the worker's name; "" for the tuner's own process
	Host string `json:"host,omitempty"` // the host name it ran on
	Tool string `json:"tool,omitempty"` // the autotune version that measured
}
