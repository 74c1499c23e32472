func.func private @f(tensor<8x16x!f16, #ipu_tile.layout<grid = [2, 1], base = 0, strides = [2, 0], replicas = 2, replica_stride = 1>>)
