// The version of these headers. CMakeLists.txt reads its project version from here, so this is
// the one place it is written; tilegemm::version() (tilegemm.hpp) gives the version of the
// library a program linked, which differs from these macros only when the two were mixed up.
#pragma once

#define TILEGEMM_VERSION_MAJOR 0
#define TILEGEMM_VERSION_MINOR 1
#define TILEGEMM_VERSION_PATCH 0
// One number that orders versions: 10000 * major + 100 * minor + patch.
#define TILEGEMM_VERSION \
  (TILEGEMM_VERSION_MAJOR * 10000 + TILEGEMM_VERSION_MINOR * 100 + TILEGEMM_VERSION_PATCH)
