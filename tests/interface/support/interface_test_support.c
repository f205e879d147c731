#define _POSIX_C_SOURCE 200809L
#include "interface_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

int test_gpu_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

static struct {
  int fd;         /* the captured descriptor, -1 when none */
  int saved_fd;   /* its original target */
  FILE *file;     /* where it writes meanwhile */
  char *text;     /* the last capture */
} capture = {-1, -1, NULL, NULL};

static void flush_all(void) {
  fflush(stdout);
  fflush(stderr);
}

int test_capture_begin(int fd) {
  if (capture.fd != -1) return -1;
  flush_all();
  capture.file = tmpfile();
  if (capture.file == NULL) return -1;
  capture.saved_fd = dup(fd);
  if (capture.saved_fd < 0 || dup2(fileno(capture.file), fd) < 0) {
    fclose(capture.file);
    return -1;
  }
  capture.fd = fd;
  return 0;
}

const char *test_capture_end(void) {
  free(capture.text);
  capture.text = NULL;
  if (capture.fd == -1) return "";
  flush_all();
  dup2(capture.saved_fd, capture.fd);
  close(capture.saved_fd);
  const long size = ftell(capture.file);
  capture.text = calloc((size_t)(size > 0 ? size : 0) + 1, 1);
  if (capture.text != NULL && size > 0) {
    rewind(capture.file);
    if (fread(capture.text, 1, (size_t)size, capture.file) != (size_t)size) capture.text[0] = '\0';
  }
  fclose(capture.file);
  capture.fd = -1;
  return capture.text != NULL ? capture.text : "";
}

int test_capture_end_contains(const char *needle) {
  return strstr(test_capture_end(), needle) != NULL;
}

int test_count_occurrences(const char *text, const char *needle) {
  int count = 0;
  const size_t length = strlen(needle);
  if (length == 0) return 0;
  for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + length, needle)) ++count;
  return count;
}
