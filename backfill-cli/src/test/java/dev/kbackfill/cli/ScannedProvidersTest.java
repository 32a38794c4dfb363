package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.spi.SelectorProvider;
import java.util.ServiceLoader;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.slf4j.spi.SLF4JServiceProvider;

/** The providers the command line names at start, so that nothing reads every jar to find them: what a scan finds. */
class ScannedProvidersTest {

    @Test
    void theLoggingProviderNamedIsTheOneBindingTheServicesFilesOffer() throws Exception {
        assertThat(SLF4JServiceProvider.class).isAssignableFrom(Class.forName(Kbackfill.SLF4J_PROVIDER));
        assertThat(ServiceLoader.load(SLF4JServiceProvider.class).stream().map(p -> p.type().getName()))
                .containsExactly(Kbackfill.SLF4J_PROVIDER);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void theSelectorProviderNamedIsTheJdksDefaultForNoJarOffersOne() throws Exception {
        assertThat(ServiceLoader.load(SelectorProvider.class).stream()).isEmpty();
        Class<?> named = Class.forName(Kbackfill.LINUX_SELECTOR_PROVIDER, false, null);
        if (System.getProperty("java.nio.channels.spi.SelectorProvider") == null) {
            assertThat(SelectorProvider.provider().getClass()).isEqualTo(named);
        }
    }
}
