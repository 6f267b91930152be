#include <zlib.h>
#include "crc32_folded.h"
