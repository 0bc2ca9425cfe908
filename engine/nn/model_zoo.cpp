#include "nn/model_zoo.h"

#include "error.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/pool.h"
#include "nn/relu.h"
#include "nn/residual.h"

namespace scalelab::nn {

namespace {

using Net = std::unique_ptr<Sequential>;

Conv2dConfig conv(int cin, int cout, int kernel, int stride, bool bias) {
    return Conv2dConfig{.in_channels = cin,
                        .out_channels = cout,
                        .kernel = kernel,
                        .stride = stride,
                        .padding = kernel / 2,
                        .bias = bias};
}

PoolConfig max_pool_2x2() {
    return PoolConfig{.kind = PoolKind::Max, .kernel = 2, .stride = 2, .padding = 0};
}
PoolConfig global_average() {
    return PoolConfig{.kind = PoolKind::Average, .kernel = 0, .stride = 1, .padding = 0};
}

Net mlp(int channels, int size, int classes) {
    auto net = std::make_unique<Sequential>("mlp");
    net->emplace<Flatten>("flatten")
        .emplace<Linear>("fc1", LinearConfig{channels * size * size, 256})
        .emplace<Relu>("relu1")
        .emplace<Linear>("fc2", LinearConfig{256, 256})
        .emplace<Relu>("relu2")
        .emplace<Linear>("fc3", LinearConfig{256, classes});
    return net;
}

Net cnn(int channels, int size, int classes) {
    auto net = std::make_unique<Sequential>("cnn");
    // ReLU and max pooling commute (relu(max x) = max(relu x)), so each ReLU runs after its
    // pool, on a quarter of the elements: the same function as conv-relu-pool, with the
    // full-size ReLU passes forward and backward gone.
    net->emplace<Conv2d>("conv1", conv(channels, 32, 3, 1, true))
        .emplace<Pool>("pool1", max_pool_2x2())
        .emplace<Relu>("relu1")
        .emplace<Conv2d>("conv2", conv(32, 64, 3, 1, true))
        .emplace<Pool>("pool2", max_pool_2x2())
        .emplace<Relu>("relu2")
        .emplace<Flatten>("flatten")
        .emplace<Linear>("fc1", LinearConfig{64 * (size / 4) * (size / 4), 128})
        .emplace<Relu>("relu3")
        .emplace<Linear>("fc2", LinearConfig{128, classes});
    return net;
}

// conv (no bias) + batch norm + relu: the unit both ResNets are made of. The ReLU runs inside
// the batch norm (oneDNN's fused norm-relu: one pass over the activation instead of two).
BatchNormOptions bn(const ModelOptions& o, bool relu, bool zero_gamma = false) {
    return BatchNormOptions{.fused_relu = relu,
                            .initial_scale = zero_gamma ? 0.0f : 1.0f,
                            .ghost_batch = o.ghost_batch};
}

void conv_bn_relu(Sequential& s, const std::string& name, int cin, int cout, int stride,
                  const ModelOptions& o) {
    s.emplace<Conv2d>(name + ".conv", conv(cin, cout, 3, stride, false))
        .emplace<BatchNorm>(name + ".bn", cout, bn(o, true));
}

// With zero_init_residual the body's last batch norm starts with gamma = 0: its output is
// 0 * xhat + 0 = 0, so the block is relu(shortcut(x)) at step 0, and it still learns (dgamma =
// sum(dy xhat) is not 0).
void basic_block(Sequential& net, const std::string& name, int cin, int cout, int stride,
                 const ModelOptions& o) {
    auto body = std::make_unique<Sequential>(name + ".body");
    conv_bn_relu(*body, name + ".1", cin, cout, stride, o);
    body->emplace<Conv2d>(name + ".2.conv", conv(cout, cout, 3, 1, false))
        .emplace<BatchNorm>(name + ".2.bn", cout, bn(o, false, o.zero_init_residual));
    std::unique_ptr<Sequential> shortcut;
    if (stride != 1 || cin != cout) {
        shortcut = std::make_unique<Sequential>(name + ".shortcut");
        shortcut->emplace<Conv2d>(name + ".shortcut.conv", conv(cin, cout, 1, stride, false))
            .emplace<BatchNorm>(name + ".shortcut.bn", cout, bn(o, false));
    }
    net.emplace<Residual>(name, std::move(body), std::move(shortcut)).emplace<Relu>(name + ".relu");
}

Net resnet(const std::string& name, int blocks_per_stage, int channels, const ModelOptions& o) {
    auto net = std::make_unique<Sequential>(name);
    conv_bn_relu(*net, "stem", channels, 16, 1, o);
    int cin = 16;
    int stage = 0;
    for (const auto& [cout, stride] : {std::pair{16, 1}, std::pair{32, 2}, std::pair{64, 2}}) {
        ++stage;
        for (int i = 0; i < blocks_per_stage; ++i) {
            basic_block(*net, "stage" + std::to_string(stage) + "." + std::to_string(i), cin, cout,
                        i == 0 ? stride : 1, o);
            cin = cout;
        }
    }
    net->emplace<Pool>("pool", global_average())
        .emplace<Flatten>("flatten")
        .emplace<Linear>("fc", LinearConfig{64, o.classes});
    return net;
}

// The course's conv_block: cbr -> dropout(0.01) -> cbr, plus a 1x1 conv (with bias) residual
// when the channel count changes.
void wrn_block(Sequential& net, const std::string& name, int cin, int cout,
               std::uint64_t& dropout_index, const ModelOptions& o) {
    auto body = std::make_unique<Sequential>(name + ".body");
    conv_bn_relu(*body, name + ".1", cin, cout, 1, o);
    body->emplace<Dropout>(name + ".dropout", 0.01f, dropout_index++);
    conv_bn_relu(*body, name + ".2", cout, cout, 1, o);
    std::unique_ptr<Sequential> shortcut;
    if (cin != cout) {
        shortcut = std::make_unique<Sequential>(name + ".rescale");
        shortcut->emplace<Conv2d>(name + ".rescale.conv", conv(cin, cout, 1, 1, true));
    }
    net.emplace<Residual>(name, std::move(body), std::move(shortcut));
}

Net wrn(int channels, const ModelOptions& o) {
    const int k = o.width;
    auto net = std::make_unique<Sequential>("wrn");
    const int w0 = 16, w1 = 16 * k, w2 = 32 * k, w3 = 64 * k;
    std::uint64_t dropout_index = 0;
    conv_bn_relu(*net, "stem", channels, w0, 1, o);
    wrn_block(*net, "block1", w0, w1, dropout_index, o);
    wrn_block(*net, "block2", w1, w1, dropout_index, o);
    net->emplace<Pool>("pool1", max_pool_2x2());
    wrn_block(*net, "block3", w1, w2, dropout_index, o);
    wrn_block(*net, "block4", w2, w2, dropout_index, o);
    net->emplace<Pool>("pool2", max_pool_2x2());
    wrn_block(*net, "block5", w2, w3, dropout_index, o);
    wrn_block(*net, "block6", w3, w3, dropout_index, o);
    net->emplace<Pool>("pool", global_average())
        .emplace<Flatten>("flatten")
        .emplace<Linear>("fc", LinearConfig{w3, o.classes});
    return net;
}

}  // namespace

std::unique_ptr<Sequential> build_model(const std::string& name, int channels, int image_size,
                                        const ModelOptions& options) {
    const int classes = options.classes;
    if (channels != 1 && channels != 3)
        throw Error(ErrorKind::InvalidSpec,
                    "models take 1- or 3-channel images, not " + std::to_string(channels));
    if (image_size < 4 || image_size % 4 != 0)
        throw Error(ErrorKind::InvalidSpec,
                    "model '" + name + "' needs square images whose side is a multiple of 4; got " +
                        std::to_string(image_size) + ": crop or pad the dataset");
    if (options.ghost_batch < 0)
        throw Error(ErrorKind::InvalidSpec, "ghost_batch must be 0 (off) or positive");
    // wrn's block bodies end in batch norm + ReLU: a zero gamma makes the body's output
    // relu(0) = 0, the identity-plus-zero wanted, but the ReLU's gradient at 0 is 0 as well, so
    // every parameter of every body would get a zero gradient at every step and the blocks
    // would never train. mlp and cnn have no residual blocks. Neither is silently ignored.
    if (options.zero_init_residual && name != "resnet8" && name != "resnet20")
        throw Error(
            ErrorKind::InvalidSpec,
            "zero_init_residual needs resnet8 or resnet20" +
                std::string(name == "wrn" ? ": wrn's blocks end in a ReLU, where a zero gamma "
                                            "would stop the blocks from ever training"
                                          : ": model '" + name + "' has no residual blocks"));
    if (name == "mlp")
        return mlp(channels, image_size, classes);
    if (name == "cnn")
        return cnn(channels, image_size, classes);
    if (name == "resnet8")
        return resnet(name, 1, channels, options);
    if (name == "resnet20")
        return resnet(name, 3, channels, options);
    if (name == "wrn") {
        if (options.width < 1)
            throw Error(ErrorKind::InvalidSpec, "wrn width must be at least 1");
        return wrn(channels, options);
    }
    throw Error(ErrorKind::InvalidSpec,
                "model '" + name + "' is unknown: choose mlp, cnn, resnet8, resnet20 or wrn");
}

}  // namespace scalelab::nn
