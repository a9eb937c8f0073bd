# The engine's image, for those who build with docker or podman (the same image as the engine pom's Jib profile,
# which needs no daemon: see README, "Install"):
#   docker build -t REGISTRY/metareactor:TAG .
# Stage 1 builds the runnable jar; stage 2 is a distroless Java 17 runtime (no shell, no package manager) running it
# as uid 65532, the user upstream's image runs as.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -ntp -pl engine -am package -DskipTests

FROM gcr.io/distroless/java17-debian12:nonroot
COPY --from=build /src/engine/target/metareactor.jar /app/metareactor.jar
# The JVM settings the engine is measured and shipped with: C1 only, the serial collector, the heap's ceiling at 70% of
# the container's memory limit, exit on OutOfMemoryError (each line says why).
COPY engine/src/main/jvm/jvm.options /etc/metareactor/jvm.options
USER 65532:65532
# /healthz and /readyz on 8081, /metrics on 9999 (the manifests' --health-probe-bind-address and --metrics-address).
EXPOSE 8081 9999
ENTRYPOINT ["java", "@/etc/metareactor/jvm.options", "-jar", "/app/metareactor.jar"]
