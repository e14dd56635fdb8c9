#!/usr/bin/python3
"""Inference with OpenCV's DNN module on its OpenCL target, for the OpenCL
shim's real-application tests (tests/test_cl_apps.sh) and latency
measurements.

The model is a small convolutional classifier written here as an ONNX file
from fixed weights (numpy's seeded generator; nothing is downloaded):
convolutions, batch normalisation, ReLU, a residual addition, a
concatenation, max and global average pooling, a fully connected layer and
a softmax. OpenCV runs each layer as OpenCL kernels on the default OpenCL
device (PoCL's CPU device needs OPENCV_OPENCL_DEVICE=:CPU: and
OPENCV_DNN_OPENCL_ALLOW_ALL_DEVICES=1, which the callers set).

  cl_dnn.py [--model PATH] run [N]
      N inferences (default 8) on fixed inputs; prints one line per
      inference, "infer I class C sha256 H" (H: the output tensor's bytes),
      then "target opencl DEVICE" and "all sha256 H" over every output.
      Two runs on the same device and kernels print the same lines. Exits
      3 (nothing run) if OpenCV finds no usable OpenCL device.
  cl_dnn.py [--model PATH] bench TASKS PERIOD_US [WARMUP]
      WARMUP (default 10) inferences, then "measuring" (flushed), then
      TASKS inferences released every PERIOD_US microseconds (+-50%
      uniform jitter, fixed seed; 0: back to back); prints
      each one's latency in microseconds (release to output), one a line,
      then "p50_us X p99_us Y".
  cl_dnn.py [--model PATH] model
      only writes the model.

Exit status 0, 1 on an error (an OpenCV error is reported on stderr), 2 on
bad usage, 3 without OpenCL.
"""
import hashlib
import os
import random
import sys
import time

import numpy as np


def build_model(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rs = np.random.RandomState(20240518)
    inits = []

    def weight(name, *shape, scale=0.2):
        inits.append(numpy_helper.from_array(
            (rs.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    nodes = []

    def conv(x, cin, cout, k, name):
        w = weight(name + "_w", cout, cin, k, k, scale=1.0 / np.sqrt(cin * k * k))
        b = weight(name + "_b", cout, scale=0.05)
        pad = k // 2
        nodes.append(helper.make_node("Conv", [x, w, b], [name], kernel_shape=[k, k],
                                      pads=[pad] * 4))
        return name

    def bn(x, c, name):
        g = weight(name + "_g", c, scale=0.1)
        inits[-1] = numpy_helper.from_array(
            (1.0 + rs.standard_normal(c) * 0.1).astype(np.float32), g)
        b = weight(name + "_b", c, scale=0.1)
        m = weight(name + "_m", c, scale=0.1)
        v = name + "_v"
        inits.append(numpy_helper.from_array(
            (1.0 + np.abs(rs.standard_normal(c)) * 0.1).astype(np.float32), v))
        nodes.append(helper.make_node("BatchNormalization", [x, g, b, m, v], [name],
                                      epsilon=1e-5))
        return name

    def relu(x, name):
        nodes.append(helper.make_node("Relu", [x], [name]))
        return name

    def pool(x, name):
        nodes.append(helper.make_node("MaxPool", [x], [name], kernel_shape=[2, 2],
                                      strides=[2, 2]))
        return name

    x = relu(bn(conv("input", 3, 16, 3, "c1"), 16, "bn1"), "r1")
    x = pool(x, "p1")                                   # 16 x 16 x 16
    y = relu(bn(conv(x, 16, 16, 3, "c2"), 16, "bn2"), "r2")
    y = bn(conv(y, 16, 16, 3, "c3"), 16, "bn3")
    nodes.append(helper.make_node("Add", [x, y], ["res"]))
    x = relu("res", "r3")
    a = relu(conv(x, 16, 16, 1, "c4a"), "r4a")
    b = relu(conv(x, 16, 16, 3, "c4b"), "r4b")
    nodes.append(helper.make_node("Concat", [a, b], ["cat"], axis=1))
    x = pool("cat", "p2")                               # 32 x 8 x 8
    x = relu(conv(x, 32, 64, 3, "c5"), "r5")
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    w = weight("fc_w", 10, 64, scale=0.3)
    b = weight("fc_b", 10, scale=0.05)
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["output"], axis=1))
    graph = helper.make_graph(
        nodes, "xsched_cl_dnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


def make_net(path):
    import cv2

    if not os.path.exists(path):
        build_model(path)
    net = cv2.dnn.readNetFromONNX(path)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_OPENCL)
    return cv2, net


def infer(net, x):
    net.setInput(x)
    return net.forward()


def inputs(n):
    return [np.random.RandomState(1000 + i).standard_normal((1, 3, 32, 32)).astype(np.float32)
            for i in range(n)]


def cmd_run(path, n):
    cv2, net = make_net(path)
    if not cv2.ocl.useOpenCL():
        sys.stderr.write("cl_dnn: OpenCV has no usable OpenCL device\n")
        return 3
    whole = hashlib.sha256()
    for i, x in enumerate(inputs(n)):
        y = infer(net, x)
        whole.update(y.tobytes())
        print("infer %d class %d sha256 %s" % (i, int(y.argmax()),
                                               hashlib.sha256(y.tobytes()).hexdigest()))
    print("target opencl %s" % cv2.ocl.Device.getDefault().name())
    print("all sha256 %s" % whole.hexdigest())
    return 0


def cmd_bench(path, tasks, period_us, warmup):
    _, net = make_net(path)
    xs = inputs(8)
    for i in range(warmup):
        infer(net, xs[i % len(xs)])
    print("measuring", flush=True)
    rng = random.Random(7)
    lat = []
    release = time.monotonic()
    for i in range(tasks):
        now = time.monotonic()
        if period_us <= 0:
            release = now       # back to back, each from its own start
        if release > now:
            time.sleep(release - now)
        infer(net, xs[i % len(xs)])
        done = time.monotonic()
        lat.append((done - release) * 1e6)
        # One released while the previous one ran starts late and counts
        # from its release (as bench/cl_load).
        release += period_us * 1e-6 * rng.uniform(0.5, 1.5)
    for v in lat:
        print("%.1f" % v)
    s = sorted(lat)
    print("p50_us %.1f p99_us %.1f" % (s[len(s) // 2], s[min(len(s) - 1, (len(s) * 99) // 100)]))


def main(argv):
    path = "cl_dnn.onnx"
    if len(argv) > 2 and argv[1] == "--model":
        path = argv[2]
        argv = argv[:1] + argv[3:]
    try:
        if len(argv) >= 2 and argv[1] == "model":
            build_model(path)
        elif len(argv) >= 2 and argv[1] == "run":
            return cmd_run(path, int(argv[2]) if len(argv) > 2 else 8)
        elif len(argv) >= 4 and argv[1] == "bench":
            cmd_bench(path, int(argv[2]), float(argv[3]),
                      int(argv[4]) if len(argv) > 4 else 10)
        else:
            sys.stderr.write(__doc__)
            return 2
    except Exception as e:      # OpenCV and ONNX errors alike
        sys.stderr.write("cl_dnn: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
