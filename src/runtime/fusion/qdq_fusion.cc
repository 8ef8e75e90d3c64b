// QDQ fusion (being written).
#include "runtime/fusion/fusion_pipeline.h"
