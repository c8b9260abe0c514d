from brushes.kernels.kernel import DabContext, Kernel, blend_complex


class Restore(Kernel):
    name = "restore"
    help = "Bring back the original recording under the brush (magnitude and phase)."

    def effect(self, ctx: DabContext):
        return blend_complex(ctx, ctx.surface.original(ctx.rect, ctx.canvas.channel))
