/**
 * `npm run image`: builds the Dockerfile with podman on the stand-in base (installing podman, buildah and
 * debootstrap from Debian on first use) and prints the image's name and size. npm runs it from the
 * repository's root, the build context.
 */
import { buildImage, LOCAL_IMAGE_NAME } from './build.js';
import { megabytes } from './podman.js';

try {
  const image = await buildImage({
    contextDir: process.cwd(),
    name: LOCAL_IMAGE_NAME,
    log: (line) => console.error(line),
  });
  const added = image.sizeBytes - image.baseSizeBytes;
  console.log(
    `${image.name} ${megabytes(image.sizeBytes)}: base ${image.base} ${megabytes(image.baseSizeBytes)} + ${megabytes(added)} added by the project (built in ${image.seconds.toFixed(0)} s)`,
  );
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
