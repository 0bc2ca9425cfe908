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
// Error(InvalidSpec) for an unknown name, an input it cannot take, or options it cannot honour.
struct ModelOptions {
    int width = 10;    // wrn's widening factor
    int classes = 10;  // outputs of the last layer
    // Goyal et al. 2017: gamma = 0 in the batch norm that ends each residual block's body, so
    // every block starts as its shortcut (resnet8, resnet20: block = relu(shortcut(x) + 0)).
    // Only for the ResNets: see build_model for why wrn (and the models without residual
    // blocks) reject it.
    bool zero_init_residual = false;
    // Ghost batch norm in every batch-norm layer: statistics over virtual batches of this many
    // samples in training (BatchNormOptions::ghost_batch); 0: off.
    int ghost_batch = 0;
};

std::unique_ptr<Sequential> build_model(const std::string& name, int channels, int image_size,
                                        const ModelOptions& options = {});

}  // namespace scalelab::nn
