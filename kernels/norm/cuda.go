package norm

import "github.com/autotune-dev/autotune/kernels"

var RMSCUDATemplate, LayerCUDATemplate kernels.Template
