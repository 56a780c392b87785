#ifndef IPCEMU_CV4L2_H
#define IPCEMU_CV4L2_H
/*
 * Shim over libv4l2 (DESIGN.md interop rules): the VIDIOC_* requests and V4L2_PIX_FMT_* codes as
 * plain constants (they are function-like macros in C, which Swift cannot import), and non-variadic
 * wrappers for open/ioctl/mmap.
 *
 * Every device operation goes through a `cv4l2_driver`: a table of function pointers with a context
 * pointer. `cv4l2_libv4l2_driver()` is the real one (libv4l2); tests build their own table and
 * become a fake camera driver. Each entry returns 0 (or a file descriptor) on success and -errno on
 * failure, so no caller ever reads errno across a thread or a Swift call.
 */
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

typedef struct cv4l2_driver {
    void *context;
    /* open(path, O_RDWR | O_NONBLOCK): a file descriptor, or -errno */
    int (*open_device)(void *context, const char *path);
    int (*close_device)(void *context, int fd);
    /* ioctl(fd, request, arg): 0 or -errno (EINTR is retried inside) */
    int (*ioctl)(void *context, int fd, unsigned long request, void *arg);
    /* mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_SHARED, fd, offset) into *out: 0 or -errno */
    int (*map_buffer)(void *context, int fd, size_t length, int64_t offset, void **out);
    int (*unmap_buffer)(void *context, void *address, size_t length);
    /* poll(fd, POLLIN): 1 readable, 2 error flagged (POLLERR/POLLHUP: DQBUF says why), 0 timed out,
       or -errno */
    int (*wait_readable)(void *context, int fd, int timeout_ms);
} cv4l2_driver;

/* The real driver: libv4l2 (format conversion, quirks) over the kernel's V4L2 API. */
cv4l2_driver cv4l2_libv4l2_driver(void);

/* Requests (VIDIOC_*). */
static const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CV4L2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CV4L2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;

/* Pixel formats (V4L2_PIX_FMT_*). */
static const uint32_t CV4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t CV4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t CV4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t CV4L2_PIX_FMT_H264 = V4L2_PIX_FMT_H264;
static const uint32_t CV4L2_PIX_FMT_HEVC = V4L2_PIX_FMT_HEVC;
static const uint32_t CV4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t CV4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;

/* Enumerations and flags, as plain integers. */
static const uint32_t CV4L2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
static const uint32_t CV4L2_MEMORY_MMAP = V4L2_MEMORY_MMAP;
static const uint32_t CV4L2_FIELD_ANY = V4L2_FIELD_ANY;
static const uint32_t CV4L2_FIELD_NONE = V4L2_FIELD_NONE;
static const uint32_t CV4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
static const uint32_t CV4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
static const uint32_t CV4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
static const uint32_t CV4L2_FMT_FLAG_COMPRESSED = V4L2_FMT_FLAG_COMPRESSED;
static const uint32_t CV4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
static const uint32_t CV4L2_FRMSIZE_TYPE_DISCRETE = V4L2_FRMSIZE_TYPE_DISCRETE;
static const uint32_t CV4L2_FRMSIZE_TYPE_CONTINUOUS = V4L2_FRMSIZE_TYPE_CONTINUOUS;
static const uint32_t CV4L2_FRMSIZE_TYPE_STEPWISE = V4L2_FRMSIZE_TYPE_STEPWISE;
static const uint32_t CV4L2_FRMIVAL_TYPE_DISCRETE = V4L2_FRMIVAL_TYPE_DISCRETE;
static const uint32_t CV4L2_FRMIVAL_TYPE_CONTINUOUS = V4L2_FRMIVAL_TYPE_CONTINUOUS;
static const uint32_t CV4L2_FRMIVAL_TYPE_STEPWISE = V4L2_FRMIVAL_TYPE_STEPWISE;
static const uint32_t CV4L2_CAP_TIMEPERFRAME = V4L2_CAP_TIMEPERFRAME;
static const uint32_t CV4L2_BUF_FLAG_ERROR = V4L2_BUF_FLAG_ERROR;
static const uint32_t CV4L2_BUF_FLAG_KEYFRAME = V4L2_BUF_FLAG_KEYFRAME;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MASK = V4L2_BUF_FLAG_TIMESTAMP_MASK;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;

#endif
