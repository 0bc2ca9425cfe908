#pragma once

#include <memory>
#include <string>

#include "nn/sequential.h"

namespace scalelab::nn {

// The models, defined exactly as ../shared/anchors/torch_anchor.py defines them so that
// figures compare like with like:
//   mlp       flatten, 256, relu, 256, relu, 10
//   cnn       conv 32 3x3 + relu + maxpool, conv 64 3x3 + relu + maxpool, fc 128 + relu, fc 10
//   resnet8   CIFAR ResNet 6n+2 with n = 1 (16/32/64 channels, 1x1 conv + BN projection)
//   resnet20  the same with n = 3
//   wrn       the course's WideResNet with widening factor `width`
// For `channels` 1 or 3 and square images whose side is a multiple of 4. Throws
// Error(InvalidSpec) for an unknown name or an input it cannot take.
std::unique_ptr<Sequential> build_model(const std::string& name, int channels, int image_size,
                                        int width = 10, int classes = 10);

}  // namespace scalelab::nn
