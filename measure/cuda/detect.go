package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
)

// Detect describes the local GPU (the driver's device 0) as a target: its
// architecture's limits from package device, with the GPU's name and the
// driver's CUDA version filled in, so that its fingerprint names the card
// ("cuda/sm_90/NVIDIA H100 80GB HBM3/13.0"). driverPath is the driver
// library, "" for libcuda.so.1 on the loader's path. It fails when there is
// no driver, no GPU, or a GPU of an architecture package device does not
// know.
func Detect(driverPath string) (device.Target, error) {
	d, err := driver.Open(driverPath)
	if err != nil {
		return device.Target{}, err
	}
	n, err := d.DeviceCount()
	if err == nil && n == 0 {
		err = errors.New("the driver sees no GPU")
	}
	if err != nil {
		return device.Target{}, err
	}
	dev, err := d.Device(0)
	if err != nil {
		return device.Target{}, err
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return device.Target{}, err
	}
	name, err := dev.Name()
	if err != nil {
		return device.Target{}, err
	}
	version, err := d.Version()
	if err != nil {
		return device.Target{}, err
	}
	arch := fmt.Sprintf("sm_%d%d", major, minor)
	t, err := device.Lookup(arch)
	if err != nil {
		return device.Target{}, fmt.Errorf("the GPU %s is %s, an architecture autotune has no limits for", name, arch)
	}
	t.GPU.Name, t.GPU.Driver = name, version
	return t, nil
}

// Probe is Detect of libcuda.so.1, asked once per process: the [device.Probe]
// that resolves "auto" and the local GPU's architecture to this machine's
// GPU (device.Resolve).
var Probe device.Probe = sync.OnceValues(func() (device.Target, error) { return Detect("") })
