#include "train/dataset_request.h"

namespace scalelab {

data::DatasetRequest dataset_request(const RunSpec& spec) {
    data::DatasetRequest request;
    request.name = spec.dataset;
    request.dir = spec.data_dir;
    request.synthetic.train = spec.synthetic_train;
    request.synthetic.test = spec.synthetic_test;
    request.synthetic.channels = spec.synthetic_channels;
    request.synthetic.size = spec.synthetic_size;
    request.synthetic.seed = spec.seed;
    request.train_subset = std::size_t(spec.train_subset);
    request.test_subset = std::size_t(spec.test_subset);
    return request;
}

data::AugmentMode augment_mode(Augmentation augment) {
    switch (augment) {  // -Wswitch flags a mode left out
        case Augmentation::None:
            return data::AugmentMode::None;
        case Augmentation::Flip:
            return data::AugmentMode::Flip;
        case Augmentation::CropFlip:
            return data::AugmentMode::CropFlip;
        case Augmentation::Assessment:
            return data::AugmentMode::Assessment;
    }
    return data::AugmentMode::None;
}

}  // namespace scalelab
