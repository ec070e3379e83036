// fourdgs/fourdgs.hpp — the whole public C++ API of the core library (fourdgs::fourdgs) in one
// include. The application tools (PLY, preview, convert) are the tools library's:
// fourdgs/tools.hpp, fourdgs::tools.
#pragma once

#include "fourdgs/version.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/http_source.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/decode.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_timeline.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/prefetch.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/player.hpp"
#include "fourdgs/writer.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/validate.hpp"
