#include "backend/cuda/module/cudnn_descriptors.h"

namespace scalelab::cuda {

TensorDescriptor::TensorDescriptor(const Shape& shape)
    : CudnnDescriptor("cudnnCreateTensorDescriptor") {
    check_cudnn(cudnnSetTensor4dDescriptor(get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, shape.n,
                                           shape.c, shape.h, shape.w),
                "cudnnSetTensor4dDescriptor for " + shape.str());
}

FilterDescriptor::FilterDescriptor(const Conv2dConfig& config)
    : CudnnDescriptor("cudnnCreateFilterDescriptor") {
    check_cudnn(
        cudnnSetFilter4dDescriptor(get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, config.out_channels,
                                   config.in_channels, config.kernel, config.kernel),
        "cudnnSetFilter4dDescriptor");
}

ConvolutionDescriptor::ConvolutionDescriptor(const Conv2dConfig& config, cudnnMathType_t math)
    : CudnnDescriptor("cudnnCreateConvolutionDescriptor") {
    check_cudnn(cudnnSetConvolution2dDescriptor(get(), config.padding, config.padding,
                                                config.stride, config.stride, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                "cudnnSetConvolution2dDescriptor");
    set_math_type(math);
}

void ConvolutionDescriptor::set_math_type(cudnnMathType_t math) {
    check_cudnn(cudnnSetConvolutionMathType(get(), math), "cudnnSetConvolutionMathType");
}

PoolingDescriptor::PoolingDescriptor(cudnnPoolingMode_t mode, int window_h, int window_w,
                                     int padding, int stride)
    : CudnnDescriptor("cudnnCreatePoolingDescriptor") {
    check_cudnn(cudnnSetPooling2dDescriptor(get(), mode, CUDNN_PROPAGATE_NAN, window_h, window_w,
                                            padding, padding, stride, stride),
                "cudnnSetPooling2dDescriptor");
}

}  // namespace scalelab::cuda
